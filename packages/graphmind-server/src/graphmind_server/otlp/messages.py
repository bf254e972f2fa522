"""Model messages from span attributes, in the transcript shape every GraphMind model adapter
describes a call in (graphmind-openai's `_chat.describe_request` / `describe_reply`):

    {"role": "user", "content": "text"}
    {"role": "assistant", "content": null, "tool_calls": [{"id", "name", "arguments"}]}
    {"role": "tool", "content": "result", "tool_call_id": "call_1"}

Read from OpenInference's flattened `llm.input_messages.{i}.message.*`, OTel GenAI 1.37's
`gen_ai.input.messages` (a JSON text of `{"role", "parts": [...]}`), and the older flattened
`gen_ai.prompt.{i}.*` / `gen_ai.completion.{i}.*` (OpenLLMetry).
"""

from __future__ import annotations

import json
from typing import Any

from . import names as n


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.{i}.rest` keys as a list of {rest: value}, in index order."""
    found: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        index, _, rest = key[len(head) :].partition(".")
        if index.isdigit() and rest:
            found.setdefault(int(index), {})[rest] = value
    return [found[i] for i in sorted(found)]


def consumed(key: str) -> bool:
    """Keys whose content the node's input or output already carries (not repeated in attrs)."""
    return key.startswith(
        (
            n.LLM_INPUT_MESSAGES + ".",
            n.LLM_OUTPUT_MESSAGES + ".",
            n.GENAI_PROMPT + ".",
            n.GENAI_COMPLETION + ".",
        )
    ) or key in (
        n.INPUT_VALUE,
        n.OUTPUT_VALUE,
        n.GENAI_INPUT_MESSAGES,
        n.GENAI_OUTPUT_MESSAGES,
        n.GENAI_TOOL_ARGUMENTS,
        n.GENAI_TOOL_RESULT,
    )


# -- OpenInference ---------------------------------------------------------------------------------


def _oi_message(flat: dict[str, Any]) -> dict[str, Any]:
    content = flat.get(n.MESSAGE_CONTENT)
    if content is None:
        parts = [
            p["message_content.text"]
            for p in _indexed(flat, n.MESSAGE_CONTENTS)
            if isinstance(p.get("message_content.text"), str)
        ]
        content = "\n".join(parts) if parts else None
    out: dict[str, Any] = {"role": flat.get(n.MESSAGE_ROLE), "content": content}
    calls = [
        {
            "id": c.get("tool_call.id"),
            "name": c.get("tool_call.function.name"),
            "arguments": c.get("tool_call.function.arguments"),
        }
        for c in _indexed(flat, n.MESSAGE_TOOL_CALLS)
    ]
    if calls:
        out["tool_calls"] = calls
    if flat.get(n.MESSAGE_TOOL_CALL_ID):
        out["tool_call_id"] = flat[n.MESSAGE_TOOL_CALL_ID]
    if flat.get(n.MESSAGE_NAME):
        out["name"] = flat[n.MESSAGE_NAME]
    return out


def _flat_message(flat: dict[str, Any]) -> dict[str, Any]:
    """OpenLLMetry's `gen_ai.prompt.{i}.role` / `.content` / `.tool_calls.{j}.name`."""
    out: dict[str, Any] = {"role": flat.get("role"), "content": flat.get("content")}
    calls = [
        {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
        for c in _indexed(flat, "tool_calls")
    ]
    if calls:
        out["tool_calls"] = calls
    if flat.get("tool_call_id"):
        out["tool_call_id"] = flat["tool_call_id"]
    return out


# -- GenAI 1.37 --------------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _genai_message(m: Any) -> dict[str, Any] | None:
    if not isinstance(m, dict):
        return None
    parts = m.get("parts")
    if not isinstance(parts, list):  # not the parts form: taken as it is, if it has a role
        return dict(m) if "role" in m else None
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    out: dict[str, Any] = {"role": m.get("role")}
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
        elif kind == "tool_call":
            calls.append({"id": part.get("id"), "name": part.get("name"), "arguments": part.get("arguments")})
        elif kind == "tool_call_response":
            response = part.get("response")
            texts.append(response if isinstance(response, str) else json.dumps(response, ensure_ascii=False))
            if part.get("id"):
                out["tool_call_id"] = part["id"]
        elif isinstance(kind, str):
            texts.append(f"[{kind}]")
    out["content"] = "\n".join(texts) if texts else None
    if calls:
        out["tool_calls"] = calls
    if m.get("finish_reason"):
        out["finish_reason"] = m["finish_reason"]
    return out


def _genai_list(value: Any) -> list[dict[str, Any]] | None:
    items = _json(value)
    if not isinstance(items, list):
        return None
    messages = [m for m in (_genai_message(x) for x in items) if m is not None]
    return messages or None


# -- the node's input and output ---------------------------------------------------------------------


def input_messages(attrs: dict[str, Any]) -> list[dict[str, Any]] | None:
    flat = _indexed(attrs, n.LLM_INPUT_MESSAGES)
    if flat:
        return [_oi_message(m) for m in flat]
    messages = _genai_list(attrs.get(n.GENAI_INPUT_MESSAGES))
    if messages is not None:
        system = _json(attrs.get(n.GENAI_SYSTEM_INSTRUCTIONS))
        if isinstance(system, list):
            texts = [
                str(p["content"]) for p in system if isinstance(p, dict) and isinstance(p.get("content"), str)
            ]
            if texts:
                messages.insert(0, {"role": "system", "content": "\n".join(texts)})
        return messages
    legacy = _indexed(attrs, n.GENAI_PROMPT)
    if legacy:
        return [_flat_message(m) for m in legacy]
    return _genai_list(attrs.get(n.GENAI_PROMPT))


def output_message(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """The reply (the first choice), as an adapter describes a reply."""
    flat = _indexed(attrs, n.LLM_OUTPUT_MESSAGES)
    if flat:
        return _oi_message(flat[0])
    messages = _genai_list(attrs.get(n.GENAI_OUTPUT_MESSAGES))
    if messages:
        return messages[0]
    legacy = _indexed(attrs, n.GENAI_COMPLETION)
    if legacy:
        return _flat_message(legacy[0])
    messages = _genai_list(attrs.get(n.GENAI_COMPLETION))
    return messages[0] if messages else None


def tool_names(attrs: dict[str, Any]) -> list[str]:
    """Names of the tools offered (`llm.tools.{i}.tool.json_schema`, a JSON schema text)."""
    names: list[str] = []
    for tool in _indexed(attrs, n.LLM_TOOLS):
        schema = _json(tool.get("tool.json_schema"))
        if not isinstance(schema, dict):
            continue
        fn = schema.get("function")
        name = fn.get("name") if isinstance(fn, dict) else schema.get("name")
        if isinstance(name, str):
            names.append(name)
    return names
