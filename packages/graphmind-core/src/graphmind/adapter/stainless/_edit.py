"""An edited `llm:step` input -> the request body the SDK sends (docs/protocol.md, "Editing a held
call"). The input a person edits is the node's (`model`, `messages`, `tools` names, `system` /
`instructions`, ...): every field left as it was keeps the request's own form (a message with
images, the tools' full definitions), a changed message is converted by the API row's
`edit_message`, a field added is sent as written (`"temperature": 0.2`), a field taken out is
left out of the request. The stream mode cannot change at a held call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._api import Api


def _tool_name(tool: Any) -> Any:
    if not isinstance(tool, Mapping):
        return None
    fn = tool.get("function")
    return tool.get("name") or (fn.get("name") if isinstance(fn, Mapping) else None)


def _tools(edited: Any, original: Any) -> Any:
    """Tool names pick the request's own definitions (so one can be dropped); an object is a new definition."""
    if not isinstance(edited, list):
        raise ValueError("tools must be a list of tool names (or tool definitions)")
    known = {_tool_name(t): t for t in original} if isinstance(original, list | tuple) else {}
    out = []
    for tool in edited:
        if isinstance(tool, str):
            if tool not in known:
                raise ValueError(
                    f"unknown tool {tool!r}: the request defines {', '.join(map(str, known)) or 'none'}"
                )
            out.append(known[tool])
        elif isinstance(tool, Mapping):
            out.append(dict(tool))
        else:
            raise ValueError(f"a tool is a name or a definition, not {type(tool).__name__}")
    return out


def edited_body(api: Api, value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    """The request body for an edited input; raises ValueError with the reason."""
    if not isinstance(value, Mapping):
        raise ValueError(f"the input must be an object (model, messages, ...), not {type(value).__name__}")
    if "stream" in value and bool(value["stream"]) != bool(request.get("stream")):
        raise ValueError("stream cannot change at a held call")
    original = api.describe_request(request)[0]
    body = dict(request)
    field = api.messages_field
    for key in original:
        if key not in value:
            body.pop(field if key == "messages" else key, None)
    for key, edited in value.items():
        if key == "stream" or (key in original and edited == original[key]):
            continue  # unchanged: the request's own form
        if key == "messages":
            if not isinstance(edited, list):
                raise ValueError("messages must be a list")
            before = original.get("messages") or []
            raw = request.get(field)
            raw = raw if isinstance(raw, list | tuple) and len(raw) == len(before) else None
            body[field] = [
                raw[i]
                if raw is not None and i < len(before) and message == before[i]
                else api.edit_message(message)
                for i, message in enumerate(edited)
            ]
        elif key == "tools":
            body["tools"] = _tools(edited, request.get("tools"))
        else:
            body[key] = edited
    return body


def request_message(message: Any) -> Any:
    """A described message as a request message: its fields, without the empty ones."""
    if not isinstance(message, Mapping):
        raise ValueError(f"a message is an object, not {type(message).__name__}")
    return {k: v for k, v in message.items() if v is not None}
