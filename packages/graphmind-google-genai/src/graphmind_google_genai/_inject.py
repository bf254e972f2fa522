"""JSON a person sent at a gate (or a replay) as the SDK's own `GenerateContentResponse`: the ONE
conversion that inject, replay and the loopback fake (`testing.py`) use.

A value is either core's one model-reply shape (`parse_model_reply`: a string, or
`{"content", "tool_calls": [{"id"?, "name", "arguments"}]}`, plus the descriptive keys a recorded
output carries: `finish_reason`, `model`, `usage`) or a whole Gemini REST body
(`{"candidates": [...], "usageMetadata": ...}`). Either becomes the REST body first (`body`), so
what an app gets from an inject is what it would get from the wire: `types.GenerateContentResponse`
validated from that body, function calls as `function_call` parts (AFC calls those functions next).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from google.genai import types

from graphmind.adapter import Items, parse_model_reply

_WORDS = re.compile(r"\s*\S+\s*|\s+")


def _usage_metadata(usage: Any) -> dict[str, Any] | None:
    """A recorded `usage` (the wire's `{inputTokens, outputTokens, totalTokens}`) as Gemini's."""
    if not isinstance(usage, Mapping):
        return None
    meta = {
        "promptTokenCount": usage.get("inputTokens"),
        "candidatesTokenCount": usage.get("outputTokens"),
        "totalTokenCount": usage.get("totalTokens"),
    }
    return {k: v for k, v in meta.items() if isinstance(v, int)} or None


def body(value: Any) -> dict[str, Any]:
    """An injected value as the Gemini REST body of one reply (raises ValueError on a bad shape).

    A function call keeps the id it was given and gets none otherwise, as Gemini answers: a
    recorded reply without ids replays into the very request the recording sent next."""
    if isinstance(value, Mapping) and "candidates" in value:
        whole = json.loads(json.dumps(value))  # a fresh copy of a whole body
        types.GenerateContentResponse.model_validate(whole)  # refused here (the gate holds again)
        return dict(whole)
    parsed = parse_model_reply(value)
    parts: list[dict[str, Any]] = []
    if parsed.content:
        parts.append({"text": parsed.content})
    given = value.get("tool_calls") if isinstance(value, Mapping) else None
    for i, call in enumerate(parsed.tool_calls):
        function_call: dict[str, Any] = {"name": call.name, "args": dict(call.arguments)}
        if isinstance(given, list) and isinstance(given[i], Mapping) and given[i].get("id"):
            function_call["id"] = call.id
        parts.append({"functionCall": function_call})
    extra = value if isinstance(value, Mapping) else {}
    finish = extra.get("finish_reason") if isinstance(extra.get("finish_reason"), str) else "STOP"
    out: dict[str, Any] = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}]
    }
    if isinstance(extra.get("model"), str):
        out["modelVersion"] = extra["model"]
    meta = _usage_metadata(extra.get("usage"))
    if meta:
        out["usageMetadata"] = meta
    return out


def response(value: Any) -> types.GenerateContentResponse:
    """An injected value as the response `generate_content` returns."""
    return from_body(body(value))


def from_body(data: Mapping[str, Any]) -> types.GenerateContentResponse:
    try:
        return types.GenerateContentResponse.model_validate(data)
    except Exception as exc:  # pydantic's ValidationError: one line for the gate's warning
        raise ValueError(f"not a Gemini GenerateContentResponse: {exc}") from None


def chunk_bodies(whole: Mapping[str, Any], pieces: int | None = None) -> list[dict[str, Any]]:
    """A reply body as the bodies of the chunks a Gemini stream sends: the text in `pieces` parts
    (None: word by word), then the function calls, the finish reason and the usage in the last."""
    candidates = whole.get("candidates") or [{}]
    first = candidates[0]
    parts = list((first.get("content") or {}).get("parts") or [])
    text = "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
    others = [p for p in parts if not isinstance(p.get("text"), str)]
    if pieces is None:
        texts = _WORDS.findall(text)
    else:
        size = max(1, -(-len(text) // max(1, pieces)))
        texts = [text[i : i + size] for i in range(0, len(text), size)]
    head = {k: v for k, v in whole.items() if k not in ("candidates", "usageMetadata")}
    out: list[dict[str, Any]] = [
        {**head, "candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}]}
        for t in texts
    ]
    last: dict[str, Any] = {"content": {"role": "model", "parts": others}, "index": 0}
    if first.get("finishReason"):
        last["finishReason"] = first["finishReason"]
    if not others and out:  # the finish reason rides on the last text chunk
        out[-1]["candidates"][0].update({k: v for k, v in last.items() if k != "content"})
    else:
        out.append({**head, "candidates": [last]})
    if whole.get("usageMetadata"):
        out[-1]["usageMetadata"] = whole["usageMetadata"]
    return out


def chunks(value: Any) -> Items:
    """An injected (or replayed) reply as the chunks a stream hands the app, word by word."""
    return Items(tuple(from_body(b) for b in chunk_bodies(body(value))))


def sse(whole: Mapping[str, Any], pieces: int) -> bytes:
    """The server-sent events `:streamGenerateContent?alt=sse` answers with (the fake's stream)."""
    return b"".join(b"data: " + json.dumps(b).encode() + b"\n\n" for b in chunk_bodies(whole, pieces))
