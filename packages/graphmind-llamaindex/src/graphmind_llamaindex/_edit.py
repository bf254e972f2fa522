"""An edited input back into a LlamaIndex call (docs/protocol.md, "Editing a held call"): an LLM's
`{"messages": [...]}` into its `ChatMessage`s, a tool's input into its keyword arguments. An
unchanged message stays the app's own object; an edited assistant turn goes through the inject
conversion (`chat_response`), so one JSON -> LlamaIndex conversion serves inject and edit alike."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage

from ._describe import message_json
from ._inject import chat_response


def _message(value: Any) -> ChatMessage:
    if not isinstance(value, Mapping) or not isinstance(value.get("role"), str):
        raise ValueError("a message is an object with a role and content")
    role = value["role"]
    if role == "assistant":
        return chat_response({k: value[k] for k in ("content", "tool_calls") if k in value}).message
    extra = {"tool_call_id": value["tool_call_id"]} if value.get("tool_call_id") else {}
    try:
        return ChatMessage(role=role, content=value.get("content"), additional_kwargs=extra)
    except Exception as exc:
        raise ValueError(f"not a ChatMessage ({type(exc).__name__}: {exc})") from None


def edited_messages(value: Any, original: Sequence[Any], described: Mapping[str, Any]) -> list[Any]:
    """The LLM's messages for an edited `{"messages": [...]}`; raises ValueError with the reason."""
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        raise ValueError('the input is {"messages": [...]}: edit the messages')
    for key in value:
        if key != "messages" and value[key] != described.get(key):
            raise ValueError(f"only the messages can be edited here, not {key!r}")
    out: list[Any] = []
    for i, message in enumerate(value["messages"]):
        same = (
            i < len(original)
            and isinstance(original[i], ChatMessage)
            and message == message_json(original[i])
        )
        out.append(original[i] if same else _message(message))
    return out


def edited_tool_kwargs(
    value: Any, tool: Any, kwargs: Mapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A tool's (args, kwargs) for an edited input, checked against its `fn_schema` (unknown and
    missing arguments); the workflow context argument stays as it was."""
    context = getattr(tool, "ctx_param_name", None)
    keep = {k: v for k, v in kwargs.items() if k == context}
    if not isinstance(value, Mapping):
        return (value,), keep
    schema = getattr(getattr(tool, "metadata", None), "fn_schema", None)
    fields = getattr(schema, "model_fields", None)
    if isinstance(fields, dict) and fields:
        takes = ", ".join(fields)
        unknown = [k for k in value if k not in fields]
        if unknown:
            raise ValueError(f"unknown argument {unknown[0]!r} (the tool takes {takes})")
        missing = [n for n, f in fields.items() if f.is_required() and n not in value and n != context]
        if missing:
            raise ValueError(f"missing argument {missing[0]!r} (the tool takes {takes})")
    return (), {**value, **keep}
