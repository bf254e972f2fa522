"""What a node shows: a crew, task, agent, model call or tool call described as fresh JSON
(docs/adapters.md, "The describer contract"): every dict and list built here, every leaf a JSON
scalar or converted to one."""

from __future__ import annotations

import json
from typing import Any

from graphmind.adapter import json_scalar, owned_copy


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if type(value) is str else str(value)


def crew_name(crew: Any) -> str:
    name = getattr(crew, "name", None)
    return name if isinstance(name, str) and name else "crew"


def agent_name(agent: Any) -> str:
    """An agent's name in GraphMind: its role (CrewAI names coworkers by role in delegation too)."""
    role = getattr(agent, "role", None)
    return role.strip() if isinstance(role, str) and role.strip() else "agent"


def task_name(task: Any) -> str:
    name = getattr(task, "name", None)
    if isinstance(name, str) and name:
        return name
    description = str(getattr(task, "description", "") or "task").strip().splitlines()[0]
    return description[:48] or "task"


def task_input(task: Any, agent: Any, context: Any) -> dict[str, Any]:
    return {
        "description": _text(getattr(task, "description", None)),
        "expectedOutput": _text(getattr(task, "expected_output", None)),
        "agent": agent_name(agent or getattr(task, "agent", None)),
        "context": _text(context),
    }


def task_output(output: Any) -> Any:
    return {"raw": _text(getattr(output, "raw", output)), "agent": _text(getattr(output, "agent", None))}


def _content(content: Any) -> Any:
    if content is None or json_scalar(content):
        return content
    copied, owned = owned_copy(content)
    return copied if owned else str(content)


def messages(messages: Any) -> list[dict[str, Any]]:
    """CrewAI's messages (`LLMMessage` dicts) as fresh dicts: role, content, and a tool turn's ids."""
    out: list[dict[str, Any]] = []
    for message in messages or []:
        if not isinstance(message, dict):
            out.append({"role": "user", "content": str(message)})
            continue
        item: dict[str, Any] = {
            "role": _text(message.get("role")),
            "content": _content(message.get("content")),
        }
        for key in ("tool_call_id", "name"):
            if message.get(key) is not None:
                item[key] = _text(message[key])
        calls = message.get("tool_calls")
        if calls:
            item["tool_calls"] = [_tool_call(c) for c in calls]
        out.append(item)
    return out


def model_input(messages_: Any, tools: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"messages": messages(messages_)}
    if tools:
        value["tools"] = [_tool_name(t) for t in tools]
    return value


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        nested = tool.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else tool
        return str(function.get("name", "tool"))
    return str(getattr(tool, "name", tool))


def _tool_call(call: Any) -> dict[str, Any]:
    """A tool call of any provider's shape (CrewAI's own `extract_tool_call_info` reads the same)."""
    if isinstance(call, dict):
        nested = call.get("function")
        function: Any = nested if isinstance(nested, dict) else call
        call_id = call.get("call_id") or call.get("id")
        name = function.get("name")
        arguments = function.get("arguments", function.get("input"))
    else:
        function = getattr(call, "function", None) or call
        call_id = getattr(call, "id", None)
        name = getattr(function, "name", None)
        arguments = getattr(function, "arguments", getattr(call, "input", None))
    return {"id": _text(call_id), "name": _text(name), "arguments": tool_arguments(arguments)}


def tool_arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments else {}
        except ValueError:
            return arguments
    copied, owned = owned_copy(arguments)
    return copied if owned else _text(arguments)


def model_output(answer: Any) -> dict[str, Any]:
    """What `get_llm_response` answered: a text, a list of tool calls (native function calling), or
    a pydantic model (a structured output)."""
    if isinstance(answer, list):
        return {"content": None, "tool_calls": [_tool_call(c) for c in answer]}
    dump = getattr(answer, "model_dump_json", None)
    if callable(dump):
        try:
            return {"content": dump()}
        except Exception:  # a field pydantic cannot serialize
            pass
    return {"content": _text(answer)}


def tool_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    value: Any = dict(kwargs) if not args else {"args": list(args), **kwargs}
    copied, owned = owned_copy(value)
    return copied if owned else {k: _text(v) for k, v in value.items()}


def tool_output(result: Any) -> Any:
    if json_scalar(result):
        return result
    copied, owned = owned_copy(result)
    if owned:
        return copied
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        try:
            return tool_output(dump(mode="json"))
        except Exception:  # a field pydantic cannot serialize: the text CrewAI falls back to as well
            pass
    return _text(result)
