"""An edited input (the node's `input` JSON, docs/protocol.md "Editing a held call") back into
ADK's own call: the model's `LlmRequest` and a tool's args dict. The engine decides the edit once
(graphmind's `_node/edit.py` through `NodeSpec.edit`); this is only the JSON -> ADK conversion.

`Edited.apply()` puts the edit into the very objects ADK goes on to use (the `LlmRequest` it sends,
the args dict it calls the tool with: google/adk/flows/llm_flows/tools/_caller.py:693-696), which is
what a before gate's "continue with this input" does; awaiting an `Edited` applies it and runs the
call again, which is what "retry with this input" at an after or error gate does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types


class Edited:
    def __init__(self, apply: Callable[[], None], run: Callable[[], Awaitable[Any]]) -> None:
        self.apply = apply
        self._run = run

    async def __call__(self) -> Any:
        self.apply()
        return await self._run()


def lossless(request: LlmRequest) -> bool:
    """Whether the request's transcript JSON holds all of it: only text, function-call and
    function-response parts (an image, a file or a thought would be lost, so such a step is not editable)."""
    for content in request.contents:
        for part in content.parts or []:
            kinds = (
                part.text is not None and not part.thought,
                part.function_call is not None,
                part.function_response is not None,
            )
            if sum(kinds) != 1 or part.inline_data is not None or part.file_data is not None:
                return False
    return True


def _text(message: dict[str, Any]) -> str | None:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return content
    raise ValueError(f"a {message.get('role')} message's content is a string or null")


def _call(raw: Any) -> types.FunctionCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ValueError('a tool call is {"id", "name", "arguments": {...}}')
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise ValueError(f"tool call {raw['name']}: arguments must be an object")
    return types.FunctionCall(id=raw.get("id"), name=raw["name"], args=arguments)


def contents_of(messages: Any) -> tuple[str | None, list[types.Content]]:
    """The transcript (`_describe._messages`'s shape) as (system instruction, ADK contents)."""
    if not isinstance(messages, list):
        raise ValueError("messages must be a list of {role, content} objects")
    system: str | None = None
    contents: list[types.Content] = []
    for message in messages:
        if not isinstance(message, dict):
            raise ValueError("each message is an object with a role")
        role = message.get("role")
        if role == "system":
            system = _text(message)
        elif role == "tool":
            response = message.get("content")
            part = types.Part(
                function_response=types.FunctionResponse(
                    id=message.get("tool_call_id"),
                    name=message.get("name"),
                    response=response if isinstance(response, dict) else {"result": response},
                )
            )
            last = contents[-1] if contents else None
            if (
                last is not None
                and last.role == "user"
                and all(p.function_response for p in last.parts or [])
            ):
                (last.parts or []).append(part)  # ADK sends parallel results as one content
            else:
                contents.append(types.Content(role="user", parts=[part]))
        elif role in ("user", "assistant"):
            parts: list[types.Part] = []
            text = _text(message)
            if text is not None:
                parts.append(types.Part(text=text))
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                raise ValueError("tool_calls must be a list")
            parts.extend(types.Part(function_call=_call(c)) for c in calls)
            contents.append(types.Content(role="model" if role == "assistant" else "user", parts=parts))
        else:
            raise ValueError(f"unknown message role {role!r} (system, user, assistant or tool)")
    return system, contents


def model_edit(request: LlmRequest, rerun: Callable[[], Awaitable[Any]]) -> Callable[[Any], Edited]:
    """`NodeSpec.edit` of a model step: the edited `{"model", "messages", ...}` into `request`."""

    def edit(value: Any) -> Edited:
        if not isinstance(value, dict) or "messages" not in value:
            raise ValueError('a model step\'s input is {"model", "messages": [...]}')
        system, contents = contents_of(value["messages"])
        model = value.get("model", request.model)
        if model is not None and not isinstance(model, str):
            raise ValueError("model must be a string")

        def apply() -> None:
            request.contents = contents
            if system is not None:
                request.config.system_instruction = system
            request.model = model

        return Edited(apply, rerun)

    return edit


def tool_edit(args: dict[str, Any], rerun: Callable[[], Awaitable[Any]]) -> Callable[[Any], Edited]:
    """`NodeSpec.edit` of a tool call: the edited arguments object into ADK's own args dict."""

    def edit(value: Any) -> Edited:
        if not isinstance(value, dict):
            raise ValueError("a tool's input is the object of its arguments")
        edited = dict(value)

        def apply() -> None:
            args.clear()
            args.update(edited)

        return Edited(apply, rerun)

    return edit
