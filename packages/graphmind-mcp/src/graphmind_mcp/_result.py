"""A tool result as the node's JSON, and an injected JSON value as the MCP SDK's `CallToolResult`.

What a person can inject at a `tool:<name>` gate (docs/mcp.md, "Inject"):

- a string: the result's text (`content: [{"type": "text", "text": ...}]`);
- the MCP wire form, `{"content": [...], "structuredContent": ..., "isError": ...}` (what the after
  gate shows, so an edited output injects as it reads);
- any other JSON value: the structured result (`structuredContent`), mirrored as JSON text.

A tool that declares an `outputSchema` needs structured content that matches it: the caller checks
the built result with the session's own validator before the app (or the host) sees it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: graphmind mcp-proxy needs mcp's models only for an inject
    from mcp.types import CallToolResult

# Keys that mark a value as the wire form of a result (`CallToolResult` serialised by alias).
_WIRE_KEYS = frozenset({"content", "structuredContent", "isError"})
_DUMP = {"mode": "json", "by_alias": True, "exclude_none": True, "exclude": {"result_type"}}


def describe_result(result: Any) -> Any:
    """The node's output: the result in its wire form (`content`, `structuredContent`, `isError`)."""
    dump = getattr(result, "model_dump", None)
    if dump is None:
        return result
    try:
        return dump(**_DUMP)
    except Exception:  # a model from an extension claim without these fields
        return dump(mode="json", by_alias=True, exclude_none=True)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def is_wire_form(value: Any) -> bool:
    if not isinstance(value, dict) or not value.keys() & _WIRE_KEYS:
        return False
    content = value.get("content")
    return content is None or isinstance(content, list)


def to_result(value: Any) -> CallToolResult:
    """An injected JSON value -> `CallToolResult`; raises ValueError with the reason on a bad shape."""
    from mcp.types import CallToolResult, TextContent

    if isinstance(value, CallToolResult):
        return value
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(text=value)])
    if is_wire_form(value):
        body = dict(value)
        if "content" not in body:
            structured = body.get("structuredContent")
            body["content"] = [] if structured is None else [{"type": "text", "text": _json_text(structured)}]
        try:
            return CallToolResult.model_validate(body, by_name=False)
        except Exception as exc:
            raise ValueError(
                f"not a valid MCP tool result ({exc.__class__.__name__}: {_first_line(exc)})"
            ) from None
    try:
        text = _json_text(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a JSON value: {exc}") from None
    return CallToolResult(content=[TextContent(text=text)], structured_content=value)


def is_error(result: Any) -> bool:
    """An `isError` result: the SDK's `CallToolResult`, or its wire form (the proxy's raw result)."""
    if isinstance(result, dict):
        return result.get("isError") is True
    return getattr(result, "is_error", False) is True  # the SDK's CallToolResult


def error_text(result: Any, limit: int = 500) -> str:
    """The text of a failed result, for the error message (the first text blocks, shortened)."""
    blocks = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    parts = []
    for block in blocks if isinstance(blocks, list) else ():
        if getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str):
            parts.append(block.text)  # the SDK's TextContent
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
    text = " ".join(parts).strip() or "(no text content)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
