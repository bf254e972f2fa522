"""An edited input back into a LangChain call (docs/protocol.md, "Editing a held call"): a chat
model's `{"messages": [...]}` into its messages, a tool's input into its arguments. An unchanged
message stays the very object the app passed; an edited AI turn goes through the inject
conversion (`to_ai_message`), so one JSON -> LangChain conversion serves inject and edit alike."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages

from ._describe import message_json, to_ai_message

_AI_ROLES = ("ai", "assistant")


def _message(value: Any) -> BaseMessage:
    if not isinstance(value, Mapping):
        raise ValueError(f"a message is an object with a role and content, not {type(value).__name__}")
    if value.get("role") in _AI_ROLES:
        reply = {k: value[k] for k in ("content", "tool_calls") if k in value}
        message = to_ai_message(reply)
        if value.get("name"):
            message.name = value["name"]
        return message
    try:
        return convert_to_messages([dict(value)])[0]
    except Exception as exc:
        raise ValueError(f"not a message LangChain takes ({type(exc).__name__}: {exc})") from None


def edited_messages(value: Any, original: Sequence[Any]) -> list[Any]:
    """The chat model's messages for an edited `{"messages": [...]}`; raises ValueError with the reason."""
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        raise ValueError('the input is {"messages": [...]}: edit the messages')
    unknown = sorted(set(value) - {"messages"})
    if unknown:
        raise ValueError(f"only the messages can be edited here, not {unknown[0]!r}")
    out: list[Any] = []
    for i, message in enumerate(value["messages"]):
        if (
            i < len(original)
            and isinstance(original[i], BaseMessage)
            and message == message_json(original[i])
        ):
            out.append(original[i])  # unchanged: the app's own message object
        else:
            out.append(_message(message))
    return out


def _check_arguments(tool: Any, value: Mapping[str, Any]) -> None:
    """Unknown or missing arguments by the tool's own schema (`BaseTool.args`, its args_schema)."""
    try:
        known = dict(tool.args)
    except Exception:  # a tool without a readable schema: the call says what is wrong
        return
    takes = ", ".join(known) or "no arguments"
    unknown = [k for k in value if k not in known]
    if unknown:
        raise ValueError(f"unknown argument {unknown[0]!r} ({tool.name} takes {takes})")
    fields = getattr(getattr(tool, "args_schema", None), "model_fields", None)
    for name, field in (fields or {}).items():
        if name in known and name not in value and field.is_required():
            raise ValueError(f"missing argument {name!r} ({tool.name} takes {takes})")


def edited_tool_call(
    value: Any, tool: Any, orig: Callable[..., Any], kwargs: Mapping[str, Any], kept: Sequence[str]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A tool's (args, kwargs) for an edited input: an object is its arguments by name, anything
    else its one positional input; LangChain's own keywords (`kept`) stay as they were."""
    keep = {k: v for k, v in kwargs.items() if k in kept}
    args: tuple[Any, ...]
    if isinstance(value, Mapping):
        _check_arguments(tool, value)
        args, named = (), {**value, **keep}
    else:
        args, named = (value,), keep
    try:
        inspect.signature(orig).bind(*args, **named)
    except TypeError as exc:
        raise ValueError(f"the tool does not take these arguments: {exc}") from None
    except ValueError:  # no signature to check against: the tool says so itself when called
        pass
    return args, named
