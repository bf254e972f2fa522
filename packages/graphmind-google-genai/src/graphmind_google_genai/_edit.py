"""An edited `llm:step` input (the shape `_describe.request` shows) turned back into the arguments of
the SDK's `_generate_content(model=, contents=, config=)`, and edited tool arguments into the
function's own arguments.

The messages become `types.Content`s (an assistant message through `_inject.body`, the inject
conversion, so its function calls keep their ids; tool messages become function responses; a
system message the config's `system_instruction`), the model and the sampling settings
(`_describe.CONFIG_FIELDS`) replace the request's. Anything else raises ValueError naming what is
wrong: core holds the gate again with `refused`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.genai import _extra_utils, types

from . import _describe, _inject


def _content(message: Mapping[str, Any], index: int) -> tuple[str, types.Content | None]:
    role, content = message.get("role"), message.get("content")
    if role == "assistant":
        reply = {k: message[k] for k in ("content", "tool_calls") if message.get(k) is not None}
        parts = _inject.body(reply or "")["candidates"][0]["content"]["parts"]
        return role, types.Content.model_validate({"role": "model", "parts": parts})
    if role in ("user", "system") and isinstance(content, str):
        return role, types.Content(role="user", parts=[types.Part(text=content)])
    if role == "tool" and isinstance(message.get("name"), str):
        response = dict(content) if isinstance(content, Mapping) else {"result": content}
        call_id = message.get("tool_call_id")
        part = types.Part(
            function_response=types.FunctionResponse(
                name=message["name"], response=response, id=call_id if isinstance(call_id, str) else None
            )
        )
        return role, types.Content(role="user", parts=[part])
    raise ValueError(
        f"messages[{index}]: a message is system/user with text content, assistant, or tool with a name "
        "(a message with images or files cannot be edited)"
    )


def request(value: Any, model: str, config: Any) -> tuple[str, list[types.Content], Any]:
    """(model, contents, config) of an edited request; raises ValueError naming what is wrong."""
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list) or not value["messages"]:
        raise ValueError('an edited model request is an object with a non-empty "messages" list')
    edited_model = value.get("model", model)
    if not isinstance(edited_model, str) or not edited_model:
        raise ValueError('"model" is the model\'s name')
    contents: list[types.Content] = []
    system: list[str] = []
    for i, message in enumerate(value["messages"]):
        if not isinstance(message, Mapping):
            raise ValueError(f"messages[{i}] is not an object")
        role, content = _content(message, i)
        assert content is not None
        if role == "system":
            system.append(str(message["content"]))
        elif role == "tool" and contents and contents[-1].role == "user" and _all_responses(contents[-1]):
            contents[-1].parts = [*(contents[-1].parts or []), *(content.parts or [])]  # one user turn
        else:
            contents.append(content)
    if not contents:
        raise ValueError("an edited model request has a user message")
    update: dict[str, Any] = {}
    settings = value.get("config") or {}
    if not isinstance(settings, Mapping):
        raise ValueError('"config" is an object of sampling settings')
    unknown = set(settings) - set(_describe.CONFIG_FIELDS)
    if unknown:
        raise ValueError(
            f"config: only {', '.join(_describe.CONFIG_FIELDS)} can be edited, not {sorted(unknown)}"
        )
    update.update(settings)
    cfg = _describe.as_config(config)
    if system or (cfg is not None and cfg.system_instruction is not None):
        update["system_instruction"] = "\n".join(system) if system else None
    if not update:
        return edited_model, contents, config
    try:
        checked = types.GenerateContentConfig.model_validate(update)  # the edited settings alone
    except Exception as exc:
        raise ValueError(f"config: {exc}") from None
    values = {k: getattr(checked, k) for k in update}
    # a copy of the request's own config: its tools stay the very functions AFC calls
    edited = cfg.model_copy(update=values) if cfg is not None else checked
    return edited_model, contents, edited


def _all_responses(content: types.Content) -> bool:
    return bool(content.parts) and all(p.function_response is not None for p in content.parts or [])


def tool_call(value: Any, function: Callable[..., Any]) -> Callable[[], Any]:
    """Edited tool arguments as the call of `function`, converted as the SDK converts the model's
    (`_extra_utils.convert_argument_from_function`: numbers, pydantic models)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"tool arguments are an object, not {type(value).__name__}")
    args = _extra_utils.convert_number_values_for_dict_function_call_args(dict(value))
    try:
        converted = _extra_utils.convert_argument_from_function(args, function)
    except Exception as exc:
        raise ValueError(f"invalid arguments: {exc}") from None
    return lambda: function(**converted)
